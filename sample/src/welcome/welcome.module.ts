import { Module } from '@nestjs/common';
import { ConfigModule } from '@nestjs/config';
import { sampleConfig } from '../sample.config.js';
import { WelcomeController } from './welcome.controller.js';

/** `POST /welcome`: a send through a typed template. */
@Module({ imports: [ConfigModule.forFeature(sampleConfig)], controllers: [WelcomeController] })
export class WelcomeModule {}
